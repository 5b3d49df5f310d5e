package main

//go:generate go run ./graph/gen
