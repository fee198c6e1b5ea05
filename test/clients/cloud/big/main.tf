# A state of several MB: big.txt is written by scripts/clients/10-cloud.steps.mjs (random, a few MB) and kept in the state twice
# (terraform_data's input and output).
terraform {
  cloud {
    workspaces {
      name = "cb-big"
    }
  }
}

resource "terraform_data" "big" {
  input = file("${path.module}/big.txt")
}
