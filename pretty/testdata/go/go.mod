module rec

go 1.22
