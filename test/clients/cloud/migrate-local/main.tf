# Step one of the migration scenario: local state, no cloud block.
resource "terraform_data" "migrated" {
  input = "local-first"
}

output "migrated" {
  value = terraform_data.migrated.output
}

output "answer" {
  value = 42
}
