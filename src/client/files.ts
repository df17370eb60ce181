import type { Core } from "./core.ts";
import type { FileInfo } from "./types.ts";

export type Uploadable = Blob | ArrayBuffer | ArrayBufferView;

/** The tenant's files: upload (multipart, 10 MB by default), metadata, delete. */
export function filesApi(core: Core) {
  const tenant = { auth: "tenant" } as const;
  return {
    /** `file.url` is public: anyone with it can download the bytes. */
    async upload(file: Uploadable, opts: { filename?: string; contentType?: string } = {}): Promise<FileInfo> {
      const type = opts.contentType ?? (file instanceof Blob ? file.type : "") ?? "";
      const blob = file instanceof Blob && !opts.contentType ? file : new Blob([file as BlobPart], type ? { type } : {});
      const form = new FormData();
      const filename = opts.filename ?? ((file as { name?: unknown }).name as string | undefined) ?? "file";
      form.append("file", blob, filename);
      return (await core.request<{ file: FileInfo }>("POST", "/api/v1/files/upload", { ...tenant, form })).file;
    },
    get: async (id: string): Promise<FileInfo> => (await core.request<{ file: FileInfo }>("GET", `/api/v1/files/${encodeURIComponent(id)}`, tenant)).file,
    delete: async (id: string): Promise<void> => {
      await core.request("DELETE", `/api/v1/files/${encodeURIComponent(id)}`, tenant);
    },
  };
}
