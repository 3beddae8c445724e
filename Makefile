# Shortcuts; the scripts do the work (a fresh Debian may not have make).
.PHONY: demo test bench clean

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

bench:
	bash scripts/bench.sh

clean:
	rm -rf .venv output/*/ .pytest_cache
