# Generates internal/cli/argparse/testdata/ledger_python.json: random argv run
# through an argparse parser of the reference ledger's shape (Python 3.11.7):
#   python3 ledger_python_gen.py 11 4000 > ledger_python.json
# Number options use the Go CLI's grammar as their type (divergence L3: ASCII
# only, no underscores), so the cases check argparse's rules, not float().
import argparse, io, json, random, re, sys, contextlib

FLOAT = re.compile(r'[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z')

def seconds(s):
    t = s.strip(' \t\n\v\f\r')
    if FLOAT.match(t):
        return s
    if t[:1] in ('+', '-'):
        t = t[1:]
    if t.lower() in ('nan', 'inf', 'infinity'):
        return s
    raise argparse.ArgumentTypeError('not a number')

def integer(s):
    t = s.strip(' \t\n\v\f\r')
    if t[:1] in ('+', '-'):
        t = t[1:]
    if t and all('0' <= c <= '9' for c in t):
        return s
    raise argparse.ArgumentTypeError('not an integer')

STATES = ['queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled']
DELIVERIES = ['pending', 'delivered', 'failed', 'not_applicable']

# (option, kind, extra): kind is 'store', 'flag' or 'append'; 'task_id' is
# the positional.
SUBS = {
    'init': [],
    'create': [('--task-id', 'store', {}), ('--parent-id', 'store', {}), ('--payload-sha256', 'store', {}),
               ('--timeout-seconds', 'store', {'type': seconds}), ('--internal', 'flag', {})],
    'start': [('task_id', 'pos', {})],
    'heartbeat': [('task_id', 'pos', {})],
    'get': [('task_id', 'pos', {})],
    'children': [('task_id', 'pos', {})],
    'history': [('task_id', 'pos', {})],
    'close': [('--status', 'store', {'choices': STATES[2:], 'required': True}), ('--code', 'store', {}), ('task_id', 'pos', {})],
    'delivery': [('--status', 'store', {'choices': DELIVERIES[1:], 'required': True}), ('--code', 'store', {}), ('task_id', 'pos', {})],
    'reconcile': [('--active-grace-seconds', 'store', {'type': seconds}), ('--delivery-grace-seconds', 'store', {'type': seconds}),
                  ('--dry-run', 'flag', {})],
    'doctor': [],
    'list': [('--status', 'append', {'choices': STATES}), ('--delivery', 'append', {'choices': DELIVERIES}),
             ('--updated-before', 'store', {'type': seconds}), ('--ended-before', 'store', {'type': seconds}),
             ('--parent-id', 'store', {}), ('--after', 'store', {}), ('--limit', 'store', {'type': integer})],
    'backup': [('--to', 'store', {'required': True})],
    'prune': [('--ended-before', 'store', {'type': seconds, 'required': True}), ('--dry-run', 'flag', {})],
}

def add(p, name, kind, extra):
    if kind == 'pos':
        p.add_argument(name)
    elif kind == 'flag':
        p.add_argument(name, dest=name[2:], action='store_true')
    elif kind == 'append':
        p.add_argument(name, dest=name[2:], action='append', **extra)
    else:
        p.add_argument(name, dest=name[2:], **extra)

def build():
    p = argparse.ArgumentParser(prog='task-state-guard')
    p.add_argument('--version', action='version', version='task-state-guard 0.1.0')
    add(p, '--db', 'store', {'required': True})
    add(p, '--allow-external-acl', 'flag', {})
    sp = p.add_subparsers(dest='command', required=True)
    for name, opts in SUBS.items():
        s = sp.add_parser(name)
        for o in opts:
            add(s, *o)
    return p

def kinds(sub):
    out = {'db': 'store', 'allow-external-acl': 'flag'}
    for name, kind, _ in SUBS[sub]:
        out[name.lstrip('-')] = kind
    return out

POOL = ['--db', '--d', '--db=x', '--allow-external-acl', '--a', '--al', '--version', '--v', '--vers', '--version=1',
        'init', 'create', 'start', 'heartbeat', 'get', 'children', 'close', 'delivery', 'reconcile', 'doctor', 'list',
        'backup', 'prune', 'history', 'frob', '--task-id', '--t', '--ta', '--timeout-seconds', '--time', '--parent-id', '--p',
        '--pa', '--payload-sha256', '--internal', '--i', '--internal=1', '--status', '--s', '--status=failed', '--code',
        '--c', '--code=x', '--delivery', '--de', '--del', '--dr', '--dry-run', '--dry-run=', '--active-grace-seconds',
        '--ac', '--delivery-grace-seconds', '--updated-before', '--u', '--ended-before', '--e', '--after', '--af',
        '--limit', '--l', '--to', '--to=x', '-h', '--help', '--h', '-hh', '-hx', '-h=', '--help=x', '--', '--', '-',
        '-5', '-0', '-0\n', '-5\n', '-0\n\n', '-.5', '-5.', '-1e3', '-x', '-d', '--bogus', '--bogus=1', 'a b', '-a b',
        '', 'ID', 'x', '5', ' 7 ', '1_0', 'abc', 'nan', 'inf', 'succeeded', 'failed', 'delivered', 'queued', 'pending',
        '-\u0663', '--=x', '---x', 'x.db']
VALUES = ['x', '5', '0', '-0', '-0\n', '-5', '1e3', 'abc', 'succeeded', 'failed', 'delivered', 'queued', 'pending', 'ID', '']

def gen(rng):
    names = list(SUBS)
    argv = []
    if rng.random() < 0.8:
        argv += ['--db', rng.choice(['x', '-5', 'd.db'])]
    if rng.random() < 0.2:
        argv.append('--allow-external-acl')
    if rng.random() < 0.9:
        sub = rng.choice(names)
        argv.append(sub)
        words = []
        for name, kind, extra in SUBS[sub]:
            if kind != 'pos' and not extra.get('required') and rng.random() < 0.5:
                continue
            if kind == 'pos':
                words.append([rng.choice(['ID', 'x', '-5', '--', 'succeeded'])])
            elif kind == 'flag':
                words.append([name])
            else:
                v = rng.choice(extra.get('choices', VALUES) + VALUES[:3])
                words.append([name, v] if rng.random() < 0.8 else [name + '=' + v])
        rng.shuffle(words)
        argv += [w for pair in words for w in pair]
    for _ in range(rng.choice([0, 0, 1, 1, 2, 4])):
        i = rng.randint(0, len(argv))
        if rng.random() < 0.6:
            argv.insert(i, rng.choice(POOL))
        elif argv and i < len(argv):
            del argv[i]
    return argv

def run(p, argv):
    out = io.StringIO(); err = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            ns = p.parse_args(argv)
    except SystemExit as e:
        text = out.getvalue()
        return {'rc': e.code or 0, 'help': text.startswith('usage:'), 'version': text.startswith('task-state-guard ')}
    vals, lists, flags = {}, {}, []
    kind_of = kinds(ns.command)
    for k, v in sorted(vars(ns).items()):
        if k == 'command' or v is None:
            continue
        kind = kind_of[k]
        if kind == 'flag':
            if v:
                flags.append(k)
        elif kind == 'append':
            lists[k] = v
        else:
            vals[k] = v
    return {'rc': 0, 'cmd': ns.command, 'values': vals, 'lists': lists, 'flags': flags}

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
