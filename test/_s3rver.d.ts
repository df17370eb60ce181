// s3rver ships no types: the part test/_s3-server.ts uses.
declare module "s3rver" {
  export default class S3rver {
    constructor(options: { address?: string; port?: number; directory: string; silent?: boolean; configureBuckets?: { name: string; configs: unknown[] }[] });
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
