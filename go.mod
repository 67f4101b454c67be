module csbench

go 1.24
