import { PEER_INSTALL, type Peer, type PeerName } from './peer.js';

export { PEER_NAMES, PEER_OPS, isPeer, type Peer, type PeerName } from './peer.js';

const missing = (err: unknown): boolean => (err as { code?: string } | undefined)?.code === 'ERR_MODULE_NOT_FOUND' || (err as { code?: string } | undefined)?.code === 'MODULE_NOT_FOUND';

/** A missing package as the backend table shows it: what is missing and the command that installs it. */
export function openError(name: PeerName, err: unknown): Error {
  if (!missing(err)) return err instanceof Error ? err : new Error(String(err));
  return new Error(`not installed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); install it with: ${PEER_INSTALL[name]}`, { cause: err });
}

/** Opens a peer; a package that is not installed is an error naming the install command. */
export async function openPeer(name: PeerName, threads: number): Promise<Peer> {
  try {
    if (name === 'onnxruntime') return await (await import('./onnxruntime.js')).openOnnxruntime(threads);
    return await (await import('./tfjs-wasm.js')).openTfjsWasm();
  } catch (err) {
    throw openError(name, err);
  }
}
