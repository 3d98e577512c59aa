module early

go 1.21
