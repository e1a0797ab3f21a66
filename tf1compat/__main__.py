from tf1compat.cli import main

raise SystemExit(main())
