# Every target is a one-line call to script/, the real entry points.
.PHONY: test check fmt lint bench fuzz build demo soak man release image

test: ; script/test
check: ; script/check
fmt: ; script/fmt
lint: ; script/lint
bench: ; script/bench
fuzz: ; script/fuzz
build: ; script/build
demo: ; script/demo
soak: ; script/soak
man: ; script/man
release: ; script/release
image: ; script/image
