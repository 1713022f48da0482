package store_test

func crashMain(path, run string) int { return 0 }
