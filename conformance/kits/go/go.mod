module wheelspec-toy-timer

go 1.19
