/** The one name of workerd's `cloudflare:workers` module the workerd suites use: the bindings. */
declare module "cloudflare:workers" {
  export const env: Record<string, unknown>;
}
