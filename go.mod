module csbench

go 1.22
