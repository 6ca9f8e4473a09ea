/** The {@link ConfigError} that `run` throws; fails the test when it throws nothing or something else. */
import { expect } from "vitest";
import { ConfigError } from "../../src/server/config/config.js";

export function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}
