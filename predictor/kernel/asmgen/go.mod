module github.com/calisym/calisym/predictor/kernel/asmgen

go 1.26

require github.com/mmcloughlin/avo v0.5.0 // indirect
