// A Terraform CLI configuration for a local plain-http service behind the recording proxy: the `host` block maps the
// hostname's services (so no https discovery runs), the token goes in `credentials`, and `hashicorp/null` comes from
// the stand-in's filesystem mirror. Answers the environment to run `terraform` with (no inherited TF_* settings).
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export function cliEnvironment({ proxy, token, mirror, dir }) {
  const host = `localhost:${proxy.port}`;
  const apiUrl = `${proxy.base}/api/v2/`;
  const cliConfig = join(dir, "terraform.rc");
  writeFileSync(
    cliConfig,
    `provider_installation {
  filesystem_mirror {
    path    = ${JSON.stringify(mirror)}
    include = ["registry.terraform.io/hashicorp/null"]
  }
  direct {
    exclude = ["registry.terraform.io/hashicorp/null"]
  }
}
host ${JSON.stringify(host)} {
  services = {
    "tfe.v2"   = ${JSON.stringify(apiUrl)}
    "tfe.v2.1" = ${JSON.stringify(apiUrl)}
    "tfe.v2.2" = ${JSON.stringify(apiUrl)}
  }
}
credentials ${JSON.stringify(host)} {
  token = ${JSON.stringify(token)}
}
`,
  );
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|TFE_|TFC_)/.test(k))),
    TF_CLI_CONFIG_FILE: cliConfig,
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
  };
  return { host, env };
}
