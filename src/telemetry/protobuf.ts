/**
 * The few protobuf encodings OTLP needs, written by hand: varints, fixed64, doubles, strings,
 * bytes and nested messages. A nested message is written in place and its length put before it
 * afterwards (one copyWithin), so an export encodes into one growing buffer.
 */

const utf8 = new TextEncoder();

export class ProtoWriter {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  private pos = 0;
  private readonly open: number[] = [];

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** Starts a length-delimited field; end it with `close()`. */
  fork(field: number): this {
    this.tag(field, 2);
    this.open.push(this.pos);
    return this;
  }

  close(): this {
    const start = this.open.pop()!;
    const len = this.pos - start;
    const n = varintSize(len);
    this.room(n);
    this.buf.copyWithin(start + n, start, this.pos);
    const end = this.pos + n;
    this.pos = start;
    this.varint(len);
    this.pos = end;
    return this;
  }

  string(field: number, s: string): this {
    if (!s) return this;
    this.fork(field);
    this.room(s.length * 3);
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written;
    return this.close();
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2).varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** A hex id (trace or span) as its bytes. */
  hexBytes(field: number, hex: string): this {
    const n = hex.length >> 1;
    this.tag(field, 2).varint(n);
    this.room(n);
    for (let i = 0; i < n; i++) this.buf[this.pos++] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return this;
  }

  uint(field: number, v: number): this {
    return v ? this.tag(field, 0).varint(v) : this;
  }

  /** int64: a negative value is its 64-bit two's complement, ten bytes. */
  int64(field: number, v: number): this {
    this.tag(field, 0);
    if (v >= 0) return this.varint(v);
    let big = BigInt.asUintN(64, BigInt(v));
    this.room(10);
    while (big > 127n) {
      this.buf[this.pos++] = Number(big & 127n) | 128;
      big >>= 7n;
    }
    this.buf[this.pos++] = Number(big);
    return this;
  }

  bool(field: number, v: boolean): this {
    return this.tag(field, 0).varint(v ? 1 : 0);
  }

  double(field: number, v: number): this {
    this.tag(field, 1).room(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
    return this;
  }

  fixed32(field: number, v: number): this {
    this.tag(field, 5).room(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
    return this;
  }

  fixed64(field: number, v: bigint): this {
    this.tag(field, 1).room(8);
    this.view.setBigUint64(this.pos, v, true);
    this.pos += 8;
    return this;
  }

  /** A packed repeated fixed64 (bucket counts). */
  packedFixed64(field: number, values: readonly number[]): this {
    this.tag(field, 2).varint(values.length * 8).room(values.length * 8);
    for (const v of values) {
      this.view.setBigUint64(this.pos, BigInt(v), true);
      this.pos += 8;
    }
    return this;
  }

  packedDouble(field: number, values: readonly number[]): this {
    this.tag(field, 2).varint(values.length * 8).room(values.length * 8);
    for (const v of values) {
      this.view.setFloat64(this.pos, v, true);
      this.pos += 8;
    }
    return this;
  }

  private tag(field: number, wire: number): this {
    return this.varint((field << 3) | wire);
  }

  private varint(v: number): this {
    this.room(10);
    while (v > 127) {
      this.buf[this.pos++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  private room(n: number): this {
    if (this.pos + n <= this.buf.length) return this;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
    return this;
  }
}

function varintSize(v: number): number {
  let n = 1;
  while (v > 127) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}
