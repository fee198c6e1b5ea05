# Step two of the migration scenario: the same configuration with a cloud block; `terraform init -migrate-state`
# copies the local state into the workspace.
terraform {
  cloud {
    workspaces {
      name = "cb-migrated"
    }
  }
}

resource "terraform_data" "migrated" {
  input = "local-first"
}

output "migrated" {
  value = terraform_data.migrated.output
}

output "answer" {
  value = 42
}
