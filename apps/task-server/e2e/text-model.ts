// A stand-in for a model driving tools it knows nothing about: it reads only the text of each tool result, makes
// the first call the text asks for ("call <tool> with <JSON>"), waits as long as the text says, answers the
// questions the text shows by asking a user for each field of the answer schema given there, and stops at the
// first result whose text asks for no further call. It never looks at structuredContent or _meta.

export interface TextResult {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface ToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/** One elicitation schema property, as far as a user filling a form needs it. */
export interface FieldSchema {
  type?: string;
  title?: string;
  enum?: unknown[];
}

/** A question as the text states it: its key, its message and the schema its answer must match. */
export interface TextQuestion {
  key: string;
  message: string;
  schema: { type?: string; properties?: Record<string, FieldSchema>; required?: string[] };
}

/** The user behind the model: accepts with a value for some fields of the schema, or declines. */
export type User = (
  question: TextQuestion,
) => { action: "accept"; values: Record<string, unknown> } | { action: "decline" };

export interface Turn extends ToolCall {
  text: string;
  isError: boolean;
  /** The whole result, kept for the test's assertions; the model itself reads only `text`. */
  result: TextResult;
}

export function textOf(result: TextResult): string {
  return result.content
    .flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : []))
    .join("\n");
}

/** The JSON value (object) starting at `start` in `text`, delimited by its matching brace. */
function jsonAt(text: string, start: number): string {
  if (text[start] !== "{") throw new Error(`no JSON object at ${start}: ${text.slice(start, start + 40)}`);
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  throw new Error(`unterminated JSON object in: ${text.slice(start)}`);
}

/** The first "call <tool> with {…}" of the text, or null when the text asks for no call. */
export function firstInstruction(text: string): ToolCall | null {
  const match = /\bcall ([A-Za-z0-9_.-]+) with (?=\{)/i.exec(text);
  if (!match?.[1]) return null;
  const args = JSON.parse(jsonAt(text, match.index + match[0].length)) as Record<string, unknown>;
  return { tool: match[1], arguments: args };
}

/** Every `Question "key": message Answer schema: {…}` line of the text. */
export function questionsIn(text: string): TextQuestion[] {
  const questions: TextQuestion[] = [];
  for (const line of text.split("\n")) {
    const match = /^Question "([^"]+)": (.*?) Answer schema: (?=\{)/.exec(line);
    if (!match?.[1] || match[2] === undefined) continue;
    const schema = JSON.parse(jsonAt(line, match[0].length)) as TextQuestion["schema"];
    questions.push({ key: match[1], message: match[2], schema });
  }
  return questions;
}

/** How long the text says to wait before the next call ("in about N s"), in milliseconds. */
export function waitHintMs(text: string): number {
  const match = /\bin about (\d+(?:\.\d+)?) s\b/.exec(text);
  return match?.[1] ? Number(match[1]) * 1000 : 0;
}

/** The answer content, field by field from the schema in the text; fields the user left out stay out. */
function fillAnswer(question: TextQuestion, user: User): Record<string, unknown> {
  const reply = user(question);
  if (reply.action === "decline") return { action: "decline" };
  const content: Record<string, unknown> = {};
  for (const name of Object.keys(question.schema.properties ?? {})) {
    if (reply.values[name] !== undefined) content[name] = reply.values[name];
  }
  for (const name of question.schema.required ?? []) {
    if (content[name] === undefined) throw new Error(`the user left the required field "${name}" unanswered`);
  }
  return { action: "accept", content };
}

/**
 * Makes `first`, then follows the text of every result until one asks for no further call. Returns every turn
 * (`first` included). `call` performs a tool call; `maxTurns` guards against a text that never ends.
 */
export async function followText(
  call: (call: ToolCall) => Promise<TextResult>,
  first: ToolCall,
  user: User,
  options: { maxTurns?: number } = {},
): Promise<Turn[]> {
  const maxTurns = options.maxTurns ?? 400;
  const turns: Turn[] = [];
  let next: ToolCall | null = first;
  while (next) {
    if (turns.length >= maxTurns) {
      throw new Error(`still told to call tools after ${maxTurns} turns; last text:\n${turns.at(-1)?.text}`);
    }
    const result = await call(next);
    const text = textOf(result);
    turns.push({ ...next, text, isError: result.isError === true, result });
    next = firstInstruction(text);
    if (!next) break;
    const questions = questionsIn(text);
    if (questions.length > 0) {
      // The text shows the call with placeholder answers: every question gets the user's real answer instead.
      const answers = next.arguments.answers as Record<string, unknown> | undefined;
      if (!answers) throw new Error(`the text asks questions but its call carries no answers:\n${text}`);
      for (const question of questions) {
        if (!(question.key in answers)) throw new Error(`the call in the text has no answer "${question.key}"`);
        answers[question.key] = fillAnswer(question, user);
      }
    }
    const waitMs = waitHintMs(text);
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  return turns;
}
