# A state of about 5 MB planned and applied in `remote` execution: big.txt is written by scripts/clients/50-large-states.steps.mjs
# (random, 2.5 MiB of text) and kept in the state twice (terraform_data's input and output), so a plan with no
# changes has a JSON plan of about 20 MB (the prior state, the planned values, each change's before and after).
terraform {
  cloud {
    workspaces {
      name = "rr-big"
    }
  }
}

resource "terraform_data" "big" {
  input = file("${path.module}/big.txt")
}
