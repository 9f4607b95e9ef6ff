# Generates internal/cli/argparse/testdata/sweep_python.json: random argv run
# through an argparse parser of the reference engine's shape (Python 3.11.7).
import argparse, io, json, random, sys, contextlib

def ttl(s):
    n = int(s)
    if n < 0:
        raise argparse.ArgumentTypeError('negative')
    return s

SUBS = {
    'read': [('--state', True)],
    'validate': [('--state', True)],
    'upsert-item': [('--state', True), ('--source', True), ('--id', True), ('--json', True), ('--writer', True), ('--now', False)],
    'cursor-get': [('--state', True), ('--source', True)],
    'cursor-advance': [('--state', True), ('--source', True), ('--to', True), ('--past-item', True), ('--writer', True), ('--now', False)],
    'lease-acquire': [('--state', True), ('--writer', True), ('--ttl-minutes', False), ('--now', False)],
    'lease-release': [('--state', True), ('--writer', True)],
    'run-record': [('--state', True), ('--writer', True), ('--outcome', True), ('--counts', True), ('--timestamp', True)],
    'import-legacy': [('--state', True), ('--file', True), ('--source-map', False)],
}

def build():
    p = argparse.ArgumentParser(prog='sweep-state')
    sp = p.add_subparsers(dest='cmd', required=True)
    for name, opts in SUBS.items():
        s = sp.add_parser(name)
        for o, req in opts:
            kw = {'required': req}
            if o == '--ttl-minutes':
                kw['type'] = ttl
            if o == '--outcome':
                kw['choices'] = ['completed', 'aborted-locked', 'partial', 'failed']
            s.add_argument(o, **kw)
    return p

POOL = ['--state', '--sta', '--s', '--st', '--source', '--so', '--writer', '--wri', '--w', '--json', '--j', '--id', '--i',
        '--to', '--t', '--past-item', '--p', '--now', '--n', '--ttl-minutes', '--ttl', '--outcome', '--o', '--counts', '--c',
        '--timestamp', '--file', '--f', '--source-map', '-h', '--help', '--h', '--he', '-hh', '-hx', '-h=', '--help=x',
        '--', '-', '-5', '-1.5', '-.5', '-5.', '-x', '-abc', '--bogus', '--bogus=1', 'a b', '-a b', '', 'val', 's.yml',
        '--state=x', '--to=-x', '--sta=y', '--s=z', '5', '-0', ' 7 ', '1_0', '1__0', 'abc', 'completed', 'partial', 'bad',
        '-\u0663', '-5\n', '--=x', '-s', '---x', '{}', '-{}', 'read', 'validate']

def gen(rng):
    names = list(SUBS)
    if rng.random() < 0.05:
        argv = []
    elif rng.random() < 0.1:
        argv = [rng.choice(POOL)]
    else:
        argv = [rng.choice(names)]
    sub = argv[0] if argv and argv[0] in SUBS else None
    if sub and rng.random() < 0.6:
        for o, req in SUBS[sub]:
            if req or rng.random() < 0.5:
                argv += [o, rng.choice(['v', '-5', '2026-07-02T12:00:00Z', '0', '30', 'completed'])]
        rest = argv[1:]; pairs = [rest[k:k+2] for k in range(0, len(rest), 2)]; rng.shuffle(pairs); argv = argv[:1] + [x for pr in pairs for x in pr]
    for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
        i = rng.randint(1 if argv else 0, len(argv))
        op = rng.random()
        if op < 0.6:
            argv.insert(i, rng.choice(POOL))
        elif argv and i < len(argv) and i > 0:
            del argv[i]
    return argv

def run(p, argv):
    out = io.StringIO(); err = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            ns = p.parse_args(argv)
    except SystemExit as e:
        return {'rc': e.code or 0, 'help': out.getvalue() != ''}
    vals = {}
    for k, v in vars(ns).items():
        if k != 'cmd' and v is not None:
            vals['--' + k.replace('_', '-')] = v
    return {'rc': 0, 'cmd': ns.cmd, 'values': vals}

rng = random.Random(int(sys.argv[1]))
p = build()
cases = []
seen = set()
while len(cases) < int(sys.argv[2]):
    argv = gen(rng)
    key = json.dumps(argv)
    if key in seen:
        continue
    seen.add(key)
    r = run(p, argv)
    r['args'] = argv
    cases.append(r)
json.dump(cases, sys.stdout, ensure_ascii=False, indent=0)
