/** The two editions the service can run as (`EDITION`): Terraform Enterprise's behaviour or HCP Terraform's. */
export type Edition = "self-hosted" | "hosted";
