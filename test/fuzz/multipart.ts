import { INVALID_UTF8, LONE_SURROGATES, oddString, PROTO_KEYS, type Rng } from "./values.ts";

/** Multipart bodies written byte by byte, so they can be broken in every way a form can. */

interface Part {
  name: string;
  filename?: string;
  type?: string;
  body: string | Uint8Array;
  /** Replaces the part's whole header block. */
  rawHeaders?: string;
}

const PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"];
const TYPES = ["text/plain", "text/csv", "application/json", "text/html", "application/xml", "text/markdown", "application/octet-stream"];
const ODD_TYPES = ["image/png", "application/x-msdownload", "text/plain; charset=\u0000", "", "text/plain; charset=utf-7", "multipart/mixed", "*/*", "TEXT/PLAIN", "text/plain;;;", "constructor"];
const FILENAMES = [
  "notes.txt", "../../etc/passwd", "a\u0000b.txt", "\u202etxt.exe", "😀.md", "x".repeat(5000) + ".txt", "", ".txt", "con.txt", 'we"ird;name=.txt',
  "__proto__", "__proto__.json", "constructor.csv", "toString.txt", "name\r\nX-Injected: 1.txt", "%2e%2e%2f.txt", "data.json", "page.html", "file.unknownext", "noext",
];

function partBytes(boundary: string, part: Part): string | Uint8Array {
  const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
  const headers = part.rawHeaders ?? `${disposition}${part.type === undefined ? "" : `\r\nContent-Type: ${part.type}`}`;
  return concat([`--${boundary}\r\n${headers}\r\n\r\n`, part.body, "\r\n"]);
}

function concat(pieces: (string | Uint8Array)[]): Uint8Array {
  const encoder = new TextEncoder();
  const bytes = pieces.map((p) => (typeof p === "string" ? encoder.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

export interface Upload {
  label: string;
  contentType: string | undefined;
  body: Uint8Array;
  /** A well-formed upload the server should accept (2xx). */
  valid?: boolean;
}

/** One upload, valid about one time in eight, else broken in one way. */
export function upload(r: Rng, maxUploadBytes: number): Upload {
  const boundary = "fuzzBoundary" + r.int(1e9);
  const type = `multipart/form-data; boundary=${boundary}`;
  const file = (over: Partial<Part> = {}): Part => ({ name: "file", filename: "notes.txt", type: "text/plain", body: "hello fuzz\n", ...over });
  const purpose = (value = "assistants"): Part => ({ name: "purpose", body: value });
  const form = (parts: Part[], close = true) => concat([...parts.map((p) => partBytes(boundary, p)), close ? `--${boundary}--\r\n` : ""]);
  const variants: [string, () => Omit<Upload, "label">][] = [
    ["valid", () => ({ contentType: type, body: form([purpose(r.pick(PURPOSES)), file({ type: r.pick(TYPES), filename: r.pick(["a.txt", "b.csv", "c.json", "d.md", "e.html", "f.xml"]) })]), valid: true })],
    ["valid, purpose last", () => ({ contentType: type, body: form([file(), purpose()]), valid: true })],
    ["no purpose", () => ({ contentType: type, body: form([file()]) })],
    ["bad purpose", () => ({ contentType: type, body: form([purpose(oddString(r)), file()]) })],
    ["prototype purpose", () => ({ contentType: type, body: form([file(), purpose(r.pick(PROTO_KEYS))]) })],
    ["two purposes", () => ({ contentType: type, body: form([purpose(), file(), purpose("__proto__")]) })],
    ["huge purpose", () => ({ contentType: type, body: form([purpose("a".repeat(200_000)), file()]) })],
    ["odd filename", () => ({ contentType: type, body: form([purpose(), file({ filename: r.pick(FILENAMES) })]) })],
    ["lone surrogate in filename or purpose", () => ({ contentType: type, body: form([purpose(r.chance(0.3) ? r.pick(LONE_SURROGATES) : "assistants"), file({ filename: `${r.pick(LONE_SURROGATES)}.txt` })]) })],
    ["invalid utf-8 in filename, purpose or names", () => {
      const bad = new Uint8Array(r.pick(INVALID_UTF8));
      const where = r.pick(["filename", "purpose", "name", "type"]);
      const at = (place: string, normal: string) => (where === place ? bad : normal);
      return {
        contentType: type,
        body: concat([
          `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n`, at("purpose", "assistants"),
          `\r\n--${boundary}\r\nContent-Disposition: form-data; name="`, at("name", "file"), `"; filename="notes`, at("filename", ""), `.txt"\r\nContent-Type: `, at("type", "text/plain"),
          `\r\n\r\nhello\r\n--${boundary}--\r\n`,
        ]),
      };
    }],
    ["odd part type", () => ({ contentType: type, body: form([purpose(), file({ type: r.pick(ODD_TYPES) })]) })],
    ["no file", () => ({ contentType: type, body: form([purpose()]) })],
    ["empty file", () => ({ contentType: type, body: form([purpose(), file({ body: "" })]) })],
    ["two files", () => ({ contentType: type, body: form([purpose(), file(), file({ filename: "second.txt" })]) })],
    ["file field not a file", () => ({ contentType: type, body: form([purpose(), { name: "file", body: "just text" }]) })],
    ["file under another name", () => ({ contentType: type, body: form([purpose(), file({ name: r.pick(PROTO_KEYS) })]) })],
    ["no closing boundary", () => ({ contentType: type, body: form([purpose(), file()], false) })],
    ["cut mid-file", () => {
      const whole = form([purpose(), file({ body: "z".repeat(5000) })]);
      return { contentType: type, body: whole.subarray(0, 300 + r.int(4000)) };
    }],
    ["cut in headers", () => ({ contentType: type, body: concat([`--${boundary}\r\nContent-Disposition: form-data; na`]) })],
    ["wrong boundary", () => ({ contentType: "multipart/form-data; boundary=somethingElse", body: form([purpose(), file()]) })],
    ["no boundary", () => ({ contentType: "multipart/form-data", body: form([purpose(), file()]) })],
    ["boundary too long", () => ({ contentType: `multipart/form-data; boundary=${"b".repeat(200)}`, body: concat([`--${"b".repeat(200)}--\r\n`]) })],
    ["empty boundary", () => ({ contentType: "multipart/form-data; boundary=", body: concat(["--\r\n\r\n--"]) })],
    ["garbage", () => ({ contentType: type, body: crypto.getRandomValues(new Uint8Array(2048)) })],
    ["empty body", () => ({ contentType: type, body: new Uint8Array() })],
    ["no content-disposition", () => ({ contentType: type, body: form([purpose(), { name: "file", body: "x", rawHeaders: "Content-Type: text/plain" }]) })],
    ["broken header", () => ({ contentType: type, body: form([purpose(), { name: "file", body: "x", rawHeaders: "Content-Disposition form-data name=file\r\n:::\r\n" + "X: ".repeat(2000) }]) })],
    ["nested multipart", () => ({ contentType: type, body: form([purpose(), file({ type: `multipart/mixed; boundary=${boundary}`, body: `--${boundary}\r\n\r\ninner\r\n` })]) })],
    ["json instead of form", () => ({ contentType: "application/json", body: concat(['{"purpose":"assistants","file":"hello"}']) })],
    ["urlencoded", () => ({ contentType: "application/x-www-form-urlencoded", body: concat(["purpose=assistants&file=hello"]) })],
    ["no content-type", () => ({ contentType: undefined, body: form([purpose(), file()]) })],
    ["text/plain", () => ({ contentType: "text/plain", body: form([purpose(), file()]) })],
    ["binary file as text", () => ({ contentType: type, body: form([purpose(), file({ body: crypto.getRandomValues(new Uint8Array(4096)) })]) })],
    ["invalid utf-8 json file", () => ({ contentType: type, body: form([purpose(), file({ filename: "x.json", type: "application/json", body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) })]) })],
    ["deep json file", () => ({ contentType: type, body: form([purpose(), file({ filename: "deep.json", type: "application/json", body: "[".repeat(10_000) + "]".repeat(10_000) })]) })],
    ["over the limit", () => ({ contentType: type, body: form([purpose(), file({ body: new Uint8Array(maxUploadBytes + 1 + r.int(1000)).fill(0x61) })]) })],
    ["many small parts", () => ({ contentType: type, body: form([purpose(), ...Array.from({ length: 2000 }, (_, i) => ({ name: `f${i}`, body: "v" })), file()]) })],
  ];
  const [label, make] = r.chance(0.12) ? variants[r.int(2)]! : r.pick(variants);
  return { label, ...make() };
}
