/**
 * A one-node ONNX model (Conv, optionally followed by Relu) written as protobuf bytes, so the
 * onnxruntime peer needs no ONNX or protobuf package. Field numbers are those of onnx.proto
 * (github.com/onnx/onnx/blob/main/onnx/onnx.proto):
 *   ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8
 *   OperatorSetIdProto: domain 1, version 2
 *   GraphProto: node 1, name 2, initializer 5, input 11, output 12
 *   NodeProto: input 1, output 2, name 3, op_type 4, attribute 5
 *   AttributeProto: name 1, i 3, ints 8, type 20 (AttributeType INT = 2, INTS = 7)
 *   TensorProto: dims 1, data_type 2 (FLOAT = 1), name 8, raw_data 9 (little-endian)
 *   ValueInfoProto: name 1, type 2; TypeProto: tensor_type 1;
 *   TypeProto.Tensor: elem_type 1, shape 2; TensorShapeProto: dim 1; Dimension: dim_value 1
 */

const IR_VERSION = 8;
/** Conv and Relu are unchanged in meaning from opset 13 on; 13 loads in every onnxruntime since 1.7. */
const OPSET = 13;
const FLOAT = 1;
const ATTR_INTS = 7;

/** Protobuf wire format: varint (0) and length-delimited (2) fields are all a model needs. */
class Writer {
  private readonly parts: Uint8Array[] = [];
  private varint(v: number): void {
    const bytes: number[] = [];
    let n = BigInt(v);
    if (n < 0n) n += 1n << 64n;
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) b |= 0x80;
      bytes.push(b);
    } while (n > 0n);
    this.parts.push(Uint8Array.from(bytes));
  }
  int(field: number, v: number): this {
    this.varint(field << 3);
    this.varint(v);
    return this;
  }
  bytes(field: number, b: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(b.length);
    this.parts.push(b);
    return this;
  }
  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  message(field: number, m: Writer): this {
    return this.bytes(field, m.finish());
  }
  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

function floatTensor(name: string, dims: readonly number[], data: Float32Array): Writer {
  const t = new Writer();
  for (const d of dims) t.int(1, d);
  t.int(2, FLOAT).string(8, name);
  // raw_data is little-endian; so is every platform onnxruntime-node ships for.
  return t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

function valueInfo(name: string, dims: readonly number[]): Writer {
  const shape = new Writer();
  for (const d of dims) shape.message(1, new Writer().int(1, d));
  return new Writer().string(1, name).message(2, new Writer().message(1, new Writer().int(1, FLOAT).message(2, shape)));
}

function intsAttribute(name: string, values: readonly number[]): Writer {
  const a = new Writer().string(1, name).int(20, ATTR_INTS);
  for (const v of values) a.int(8, v);
  return a;
}

export interface ConvModelSpec {
  /** NCHW. */
  readonly inputShape: readonly [number, number, number, number];
  /** M×C×K×K. */
  readonly weightShape: readonly [number, number, number, number];
  /** NCHW, from the op's own shape rules in @kernelkit/ops. */
  readonly outputShape: readonly [number, number, number, number];
  readonly weights: Float32Array;
  readonly bias?: Float32Array | undefined;
  /** Zero padding on each side of height and width. */
  readonly pad: number;
  readonly relu?: boolean;
}

/** Graph input and output names of `convModel`. */
export const CONV_INPUT = 'x';
export const CONV_OUTPUT = 'y';

/** Stride 1, dilation 1, one group: ONNX Conv is correlation, as kernelkit's conv2d and convLayer. */
export function convModel(s: ConvModelSpec): Uint8Array {
  const k = s.weightShape[2];
  const outShape = s.outputShape;
  const conv = new Writer().string(1, CONV_INPUT).string(1, 'w');
  if (s.bias !== undefined) conv.string(1, 'b');
  conv
    .string(2, s.relu ? 'conv' : CONV_OUTPUT)
    .string(3, 'conv')
    .string(4, 'Conv')
    .message(5, intsAttribute('kernel_shape', [k, k]))
    .message(5, intsAttribute('pads', [s.pad, s.pad, s.pad, s.pad]))
    .message(5, intsAttribute('strides', [1, 1]));
  const graph = new Writer().message(1, conv);
  if (s.relu) graph.message(1, new Writer().string(1, 'conv').string(2, CONV_OUTPUT).string(3, 'relu').string(4, 'Relu'));
  graph.string(2, 'kernelkit-bench-conv').message(5, floatTensor('w', s.weightShape, s.weights));
  if (s.bias !== undefined) graph.message(5, floatTensor('b', [s.weightShape[0]], s.bias));
  graph.message(11, valueInfo(CONV_INPUT, s.inputShape)).message(12, valueInfo(CONV_OUTPUT, outShape));
  return new Writer()
    .int(1, IR_VERSION)
    .string(2, 'kernelkit-bench')
    .message(7, graph)
    .message(8, new Writer().string(1, '').int(2, OPSET))
    .finish();
}
