# A state of about 100 MB in `local` execution: scripts/clients/large-states.mjs writes it (terraform_data instances
# holding large strings) and `terraform state push`es it through the cloud block, then pulls it back.
terraform {
  cloud {
    workspaces {
      name = "cb-huge"
    }
  }
}
