# A state of about 100 MB in `local` execution: scripts/clients/50-large-states.steps.mjs writes it (terraform_data instances
# holding large strings) and `terraform state push`es it through the cloud block, then pulls it back.
terraform {
  cloud {
    workspaces {
      name = "cb-huge"
    }
  }
}
