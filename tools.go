//go:build tools

package calisym

import (
	_ "github.com/foxglove/mcap/go/mcap"
	_ "github.com/gorilla/websocket"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
	_ "gonum.org/v1/gonum/blas/blas64"
	_ "gonum.org/v1/plot"
)
