module example.com/inl

go 1.26
