/**
 * Buffer's byte search and UTF-8 decoder, called on plain Uint8Arrays (`utf8Slice.call(chunk, start,
 * end)`): a Buffer view of a chunk (`Buffer.from(chunk.buffer, …)`) or a `subarray` of it first gives
 * the chunk an ArrayBuffer object, which cost ~300 ns a chunk.
 */
export const { utf8Slice } = Buffer.prototype as unknown as Record<"utf8Slice", (this: Uint8Array, start: number, end: number) => string>;
export const { indexOf, lastIndexOf } = Buffer.prototype;
