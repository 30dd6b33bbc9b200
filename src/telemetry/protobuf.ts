/**
 * The few protobuf encodings OTLP needs, written by hand: varints, fixed64, doubles, strings,
 * bytes and nested messages. A nested message is written in place after one byte kept for its
 * length, which is filled in afterwards (moving the message only when its length needs more than
 * one byte), so an export encodes into one growing buffer.
 */

const utf8 = new TextEncoder();

export class ProtoWriter {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  private readonly open: number[] = [];

  /** `size`: the bytes expected, so that a batch grows its buffer once at most. */
  constructor(size = 256) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** Starts a length-delimited field; end it with `close()`. */
  fork(field: number): this {
    this.tag(field, 2).room(1);
    this.open.push(++this.pos);
    return this;
  }

  close(): this {
    const start = this.open.pop()!;
    const len = this.pos - start;
    if (len < 128) {
      this.buf[start - 1] = len;
      return this;
    }
    const extra = varintSize(len) - 1;
    this.room(extra);
    this.buf.copyWithin(start + extra, start, this.pos);
    const end = this.pos + extra;
    this.pos = start - 1;
    this.varint(len);
    this.pos = end;
    return this;
  }

  string(field: number, s: string): this {
    if (!s) return this;
    if (s.length < 128) {
      // Most strings here are short ASCII: written a char at a time, with no encoder call.
      this.tag(field, 2).room(s.length + 1);
      const at = this.pos;
      this.buf[this.pos++] = s.length;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        this.buf[this.pos++] = c;
      }
      if (i === s.length) return this;
      this.pos = at - 1; // not ASCII: back to the tag's last byte and write it the general way
      this.pos -= varintSize((field << 3) | 2) - 1;
    }
    this.fork(field);
    this.room(s.length * 3);
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written;
    return this.close();
  }

  /** Bytes already encoded (a field written once and kept). */
  raw(b: Uint8Array): this {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
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
    this.tag(field, 2).varint(n).room(n);
    for (let i = 0; i < hex.length; i += 2) this.buf[this.pos++] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
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

  /** Microseconds since the epoch as fixed64 nanoseconds, exact without BigInt: us < 2^53, split in 32-bit halves. */
  nanos(field: number, us: number): this {
    this.tag(field, 1).room(8);
    const high = Math.floor(us / 2 ** 32);
    const low = (us % 2 ** 32) * 1000;
    const carry = Math.floor(low / 2 ** 32);
    this.view.setUint32(this.pos, low % 2 ** 32, true);
    this.view.setUint32(this.pos + 4, high * 1000 + carry, true);
    this.pos += 8;
    return this;
  }

  fixed64(field: number, v: number): this {
    this.tag(field, 1).room(8);
    this.view.setUint32(this.pos, v % 2 ** 32, true);
    this.view.setUint32(this.pos + 4, Math.floor(v / 2 ** 32), true);
    this.pos += 8;
    return this;
  }

  /** A packed repeated fixed64 (bucket counts). */
  packedFixed64(field: number, values: readonly number[]): this {
    this.tag(field, 2).varint(values.length * 8).room(values.length * 8);
    for (const v of values) {
      this.view.setUint32(this.pos, v % 2 ** 32, true);
      this.view.setUint32(this.pos + 4, Math.floor(v / 2 ** 32), true);
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

/** The value of a lower-case hex digit. */
const nibble = (c: number) => (c <= 57 ? c - 48 : c - 87);
