# test rules, filled in below
