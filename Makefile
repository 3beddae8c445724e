# Shortcuts; the scripts do the work (a fresh Debian may not have make).
.PHONY: demo test bench fuzz clean

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

bench:
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh

clean:
	rm -rf .venv output/*/ .pytest_cache
