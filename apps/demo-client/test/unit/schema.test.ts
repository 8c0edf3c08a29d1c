// The generated forms' reading and checks of a JSON Schema object (src/forms/schema.ts): fields, types, choices,
// initial values, and every check run before anything is sent. Plain functions, no browser.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../shared/mcp.ts";
import { choicesOf, fieldsOf, initialValues, requiredOf, typeOf, validate } from "../../src/forms/schema.ts";

const schema = (properties: JsonObject, required: string[] = []): JsonObject => ({
  type: "object",
  properties,
  required,
});

describe("reading a schema", () => {
  it("lists the properties in order, ignoring what is not an object", () => {
    const fields = fieldsOf(schema({ a: { type: "string" }, b: 3, c: { type: "number", title: "C" } }));
    expect(fields).toEqual([
      ["a", { type: "string" }],
      ["b", {}],
      ["c", { type: "number", title: "C" }],
    ]);
    expect(fieldsOf({ type: "object" })).toEqual([]);
  });

  it("keeps only the string names of `required`", () => {
    expect([...requiredOf({ required: ["a", 7, "b", null] })]).toEqual(["a", "b"]);
    expect(requiredOf({ required: "a" }).size).toBe(0);
  });

  it("types a field by its first non-null type; an enum or oneOf as string; anything else as JSON", () => {
    expect(typeOf({ type: ["null", "integer"] })).toBe("integer");
    expect(typeOf({ type: "boolean" })).toBe("boolean");
    expect(typeOf({ enum: [1, 2] })).toBe("string");
    expect(typeOf({ oneOf: [{ const: "a" }] })).toBe("string");
    expect(typeOf({})).toBe("json");
  });

  it("offers an enum's values, or a oneOf's consts with their titles", () => {
    expect(choicesOf({ enum: ["png", 2] })).toEqual([
      { value: "png", label: "png" },
      { value: 2, label: "2" },
    ]);
    expect(choicesOf({ oneOf: [{ const: "svg", title: "Vector (SVG)" }, { const: "png" }] })).toEqual([
      { value: "svg", label: "Vector (SVG)" },
      { value: "png", label: "png" },
    ]);
    // A oneOf of sub-schemas is not a list of choices.
    expect(choicesOf({ oneOf: [{ const: "a" }, { title: "free" }] })).toBeUndefined();
    expect(choicesOf({ type: "string" })).toBeUndefined();
  });

  it("starts from the defaults: booleans checked or not, JSON as its text, the rest as strings", () => {
    expect(
      initialValues(
        schema({
          on: { type: "boolean", default: true },
          off: { type: "boolean" },
          count: { type: "integer", default: 3 },
          name: { type: "string" },
          options: { default: { deep: [1] } },
        }),
      ),
    ).toEqual({ on: true, off: false, count: "3", name: "", options: '{"deep":[1]}' });
  });
});

describe("checking the values before anything is sent", () => {
  it("sends typed values: trimmed strings, numbers, booleans, choices as the schema's values, parsed JSON", () => {
    const checked = validate(
      schema({
        title: { type: "string" },
        seconds: { type: "number" },
        dry: { type: "boolean" },
        level: { enum: [1, 2, 3] },
        extra: {},
        empty: { type: "string" },
      }),
      { title: "  Q3 report ", seconds: "1.5", dry: true, level: "2", extra: '{"a":[true]}', empty: "  " },
    );
    expect(checked).toEqual({
      ok: true,
      value: { title: "Q3 report", seconds: 1.5, dry: true, level: 2, extra: { a: [true] } },
    });
  });

  it("marks a missing required field, and only a required one", () => {
    const checked = validate(schema({ to: { type: "string" }, cc: { type: "string" } }, ["to"]), { to: " ", cc: "" });
    expect(checked).toEqual({ ok: false, errors: { to: "is required" } });
  });

  it("checks numbers: a number, whole for an integer, within the inclusive and exclusive bounds", () => {
    const numbers = schema({
      n: { type: "integer", minimum: 1, maximum: 10 },
      x: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    });
    const errors = (n: string, x: string) => {
      const checked = validate(numbers, { n, x });
      return checked.ok ? {} : checked.errors;
    };
    expect(errors("ten", "0.5")).toEqual({ n: "must be a number" });
    expect(errors("2.5", "0.5")).toEqual({ n: "must be a whole number" });
    expect(errors("0", "0.5")).toEqual({ n: "must be at least 1" });
    expect(errors("11", "0.5")).toEqual({ n: "must be at most 10" });
    expect(errors("1", "0")).toEqual({ x: "must be more than 0" });
    expect(errors("10", "1")).toEqual({ x: "must be less than 1" });
    expect(validate(numbers, { n: "10", x: "0.999" })).toEqual({ ok: true, value: { n: 10, x: 0.999 } });
  });

  it("checks strings: lengths, the email format, a pattern (named by its format when it has one)", () => {
    const strings = schema({
      code: { type: "string", minLength: 2, maxLength: 4 },
      mail: { type: "string", format: "email" },
      bucket: { type: "string", pattern: "^[a-z]+$" },
      date: { type: "string", format: "date", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    });
    const ok = { code: "ab", mail: "a@b.example", bucket: "logs", date: "2026-12-04" };
    expect(validate(strings, ok)).toEqual({ ok: true, value: ok });
    expect(validate(strings, { ...ok, code: "a" })).toEqual({
      ok: false,
      errors: { code: "must be at least 2 characters" },
    });
    expect(validate(strings, { ...ok, code: "abcde" })).toEqual({
      ok: false,
      errors: { code: "must be at most 4 characters" },
    });
    expect(validate(strings, { ...ok, mail: "someone@invalid" })).toEqual({
      ok: false,
      errors: { mail: "must be an email address" },
    });
    expect(validate(strings, { ...ok, bucket: "Logs" })).toEqual({
      ok: false,
      errors: { bucket: "must match ^[a-z]+$" },
    });
    expect(validate(strings, { ...ok, date: "4 Dec" })).toEqual({
      ok: false,
      errors: { date: "must be a valid date" },
    });
  });

  it("leaves a pattern this browser cannot compile to the server", () => {
    expect(validate(schema({ p: { type: "string", pattern: "(" } }), { p: "anything" })).toEqual({
      ok: true,
      value: { p: "anything" },
    });
  });

  it("refuses a value outside the choices, naming them, and text that is not JSON", () => {
    const choices = schema({
      format: {
        oneOf: [
          { const: "svg", title: "SVG" },
          { const: "png", title: "PNG" },
        ],
      },
    });
    expect(validate(choices, { format: "gif" })).toEqual({ ok: false, errors: { format: "must be one of: SVG, PNG" } });
    expect(validate(choices, { format: "png" })).toEqual({ ok: true, value: { format: "png" } });
    expect(validate(schema({ data: {} }), { data: "{oops" })).toEqual({ ok: false, errors: { data: "must be JSON" } });
  });
});
