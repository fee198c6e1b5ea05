# Tag-set strategy: every workspace carrying both tags belongs to this configuration.
terraform {
  cloud {
    workspaces {
      tags = ["clients-app", "clients-cli"]
    }
  }
}

resource "terraform_data" "tagged" {
  input = terraform.workspace
}
