/** What a signed URL lets its bearer do: move bytes into an upload, or read a finished file. */
export type UrlScope = "upload" | "download";

/**
 * Who is asking for a file: a principal (its owner, if the credentials are the owner's), and/or the bearer of a URL
 * the server signed for this handle and scope. An upload signature reaches the file only while it is uploading; a
 * download signature, a ready file. Either one that matches is enough.
 */
export interface FileAccess {
  handle: string;
  principal?: string;
  signed?: UrlScope;
}
