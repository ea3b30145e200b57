/**
 * Counts the shared memory a worker's tasks hand it, towards the worker's next garbage collection.
 *
 * The worker's handles on past tasks' shared buffers keep that memory alive, even after the pool
 * dropped it, until the worker collects garbage, which V8 does not count shared memory towards. So
 * a worker prompts a collection after every `promptBytes` seen. The pool's own buffers and
 * memories come back call after call under the same id (buffer-ids.ts): each counts once until the
 * next collection, so a loop of same-sized calls, which drops nothing, prompts none. A caller's
 * own shared arrays have no id and count every time.
 */
export class SharedSeen {
  private bytes = 0;
  private readonly ids = new Set<number>();
  constructor(readonly promptBytes: number) {}

  /** Notes the shared buffers among `task`'s values; true when a collection is due (the count restarts). */
  note(task: object): boolean {
    for (const value of Object.values(task)) this.bytes += this.bytesOf(value);
    if (this.bytes <= this.promptBytes) return false;
    this.bytes = 0;
    this.ids.clear();
    return true;
  }

  private bytesOf(value: unknown): number {
    if (typeof value !== 'object' || value === null) return 0;
    // A `Ref` ({ buf, id? }) or a `ModuleMemory` ({ memory: WebAssembly.Memory, id }).
    const { buf, memory, id } = value as { buf?: unknown; memory?: { buffer?: unknown }; id?: unknown };
    const shared = buf ?? memory?.buffer;
    if (!(shared instanceof SharedArrayBuffer)) return 0;
    if (typeof id === 'number') {
      if (this.ids.has(id)) return 0;
      this.ids.add(id);
    }
    return shared.byteLength;
  }
}
