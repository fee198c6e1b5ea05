# Key-value tag strategy (Terraform >= 1.10): workspaces whose tag bindings include both pairs.
terraform {
  cloud {
    workspaces {
      tags = {
        env  = "dev"
        team = "clients"
      }
    }
  }
}

resource "terraform_data" "tagged" {
  input = terraform.workspace
}
