/**
 * What `examples/identity-compute/server.ts` prints: the `OS_*` environment
 * and the commands for the demo user and for the administrator. Hermetic: the
 * banner is rendered for an app called directly, no server is started.
 */
import { describe, expect, it } from "vitest";
import {
  banner,
  openstackCommand,
  openstackCommandAs,
  openstackEnv,
  SUGGESTED_COMMANDS,
  type RunningExample,
} from "../../examples/identity-compute/server.js";
import { exampleApp } from "./helpers.js";

async function fakeRunning(passwords = { demo: "demo-pw", admin: "adm'in pw" }): Promise<RunningExample> {
  const app = await exampleApp({ origin: "http://127.0.0.1:5000" });
  return { url: "http://127.0.0.1:5000", authUrl: "http://127.0.0.1:5000/v3", users: { demo: "demo", admin: "admin" }, passwords, app, close: async () => {} };
}

describe("identity example banner", () => {
  it("gives the administrator's environment and commands as well as the demo user's", async () => {
    const example = await fakeRunning();
    const text = banner(example);
    const admin = text.slice(text.indexOf("As admin"));
    expect(text.indexOf("As demo, a member of project demo:")).toBeGreaterThan(0);
    expect(text.indexOf("As demo")).toBeLessThan(text.indexOf("As admin"));
    expect(admin).toContain("As admin, an administrator (the admin role on project demo):");
    expect(admin).toContain("  export OS_AUTH_URL=http://127.0.0.1:5000/v3 OS_IDENTITY_API_VERSION=3 OS_USERNAME=admin OS_PASSWORD='adm'\\''in pw'\n");
    expect(admin).toContain("  export OS_PROJECT_NAME=demo OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_INTERFACE=public\n");
    for (const args of SUGGESTED_COMMANDS.admin) expect(admin).toContain(`  openstack ${args.join(" ")}\n`);
    expect(SUGGESTED_COMMANDS.admin).toContainEqual(["server", "list", "--all-projects", "--long"]);
    expect(SUGGESTED_COMMANDS.admin).toContainEqual(["flavor", "list", "--all", "--long"]);
    const demo = text.slice(0, text.indexOf("As admin"));
    expect(demo).toContain("OS_USERNAME=demo OS_PASSWORD=demo-pw\n");
    for (const args of SUGGESTED_COMMANDS.demo) expect(demo).toContain(`  openstack ${args.join(" ")}\n`);
    expect(demo).not.toContain("OS_USERNAME=admin");
    expect(text).toContain("users: demo / demo-pw, admin / adm'in pw");
  });

  it("openstackEnv and the one-line commands, for either user", async () => {
    const example = await fakeRunning({ demo: "d", admin: "a" });
    expect(openstackEnv(example, "admin")).toEqual({
      OS_AUTH_URL: "http://127.0.0.1:5000/v3",
      OS_IDENTITY_API_VERSION: "3",
      OS_USERNAME: "admin",
      OS_PASSWORD: "a",
      OS_PROJECT_NAME: "demo",
      OS_USER_DOMAIN_NAME: "Default",
      OS_PROJECT_DOMAIN_NAME: "Default",
      OS_INTERFACE: "public",
    });
    expect(openstackEnv(example).OS_USERNAME).toBe("demo");
    expect(openstackCommand(example, "server list")).toBe(
      "openstack --os-auth-url http://127.0.0.1:5000/v3 --os-identity-api-version 3 --os-username demo --os-password d " +
        "--os-project-name demo --os-user-domain-name Default --os-project-domain-name Default --os-interface public server list",
    );
    expect(openstackCommandAs(example, "admin", "server", "list", "--all-projects")).toContain("--os-username admin --os-password a ");
  });
});
