// What a generated form shows for each schema property (src/forms/fields.ts): the input, id, label, choices and
// suggestions. Plain functions, no browser.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../shared/mcp.ts";
import { formFieldsOf, hasFileField } from "../../src/forms/fields.ts";

const reportSchema: JsonObject = {
  type: "object",
  properties: {
    file: { type: "string", description: "An uploaded file's handle" },
    title: { type: "string", title: "Chart title" },
    bins: { type: "integer", title: "Bins" },
    to: { type: "string", format: "email" },
    format: { enum: ["svg", "png"] },
    log: { type: "boolean" },
    options: {},
    bucket: { type: "string", examples: ["logs", 2026] },
  },
  required: ["file", "bins"],
};

describe("form fields from a schema", () => {
  it("picks each property's input in the schema's order", () => {
    const fields = formFieldsOf(reportSchema, "arg", true);
    expect(fields.map((f) => [f.name, f.input])).toEqual([
      ["file", "file"],
      ["title", "text"],
      ["bins", "text"],
      ["to", "text"],
      ["format", "select"],
      ["log", "checkbox"],
      ["options", "textarea"],
      ["bucket", "text"],
    ]);
  });

  it("ids the inputs by prefix and name, labels them by title (or name), starring the required ones", () => {
    const [file, title, bins] = formFieldsOf(reportSchema, "answer-q1", false);
    expect([file?.id, file?.label, file?.description]).toEqual([
      "answer-q1-file",
      "file *",
      "An uploaded file's handle",
    ]);
    expect([title?.id, title?.label]).toEqual(["answer-q1-title", "Chart title"]);
    expect(bins?.label).toBe("Bins *");
  });

  it("types numbers as text with a decimal keyboard, an email field as email", () => {
    const byName = Object.fromEntries(formFieldsOf(reportSchema, "arg", false).map((f) => [f.name, f]));
    expect([byName.bins?.inputType, byName.bins?.inputMode]).toEqual(["text", "decimal"]);
    expect([byName.to?.inputType, byName.to?.inputMode]).toEqual(["email", undefined]);
    expect([byName.title?.inputType, byName.title?.inputMode]).toEqual(["text", undefined]);
  });

  it("offers an enum as choices and examples as suggestions, as text", () => {
    const byName = Object.fromEntries(formFieldsOf(reportSchema, "arg", false).map((f) => [f.name, f]));
    expect(byName.format?.choices).toEqual([
      { value: "svg", label: "svg" },
      { value: "png", label: "png" },
    ]);
    expect(byName.bucket?.suggestions).toEqual(["logs", "2026"]);
    expect(byName.title?.suggestions).toBeUndefined();
  });

  it("gives the `file` field the upload picker only with uploads to pick, and only for a string", () => {
    expect(formFieldsOf(reportSchema, "arg", false)[0]?.input).toBe("text");
    expect(hasFileField(reportSchema)).toBe(true);
    const numeric: JsonObject = { type: "object", properties: { file: { type: "integer" } } };
    expect(hasFileField(numeric)).toBe(false);
    expect(formFieldsOf(numeric, "arg", true)[0]?.input).toBe("text");
    // Choices win over the picker: an enum'd `file` is a select.
    const listed: JsonObject = { type: "object", properties: { file: { enum: ["file_a", "file_b"] } } };
    expect(formFieldsOf(listed, "arg", true)[0]?.input).toBe("select");
  });
});
