module cgoshared

go 1.21
