package hipify

//go:generate go run ./gen -tables gen/tables -o zz_map.go
