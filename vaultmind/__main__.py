from vaultmind.cli.main import main

raise SystemExit(main())
