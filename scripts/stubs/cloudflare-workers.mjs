// Stand-in for the workerd-only module when the app is loaded in Node to print its OpenAPI document.
export class DurableObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
export const env = {};
export const exports = {};
