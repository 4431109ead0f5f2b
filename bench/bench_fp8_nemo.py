# NeMo 24.07 H100 fp8 rows (bench/data/nemo_fp8_h100.json) replayed by clustersim: step-time error per
# row and summary. Run by hand after ./setup.sh build:  python3 bench/bench_fp8_nemo.py [key=value ...]
# Mapping (assumed where NeMo's table is silent): the dgx-h100-superpod preset with nodes = GPUs / 8;
# the row's tp, pp, cp, dp, virtual stages (interleaved 1F1B when vp > 1), micro- and global batch;
# sequence parallelism and tp-comm overlap when tp > 1; distributed optimizer (ZeRO 1) with overlapped
# gradient reduce and parameter gather; no recompute; fp8 delayed scaling; analytical fidelity.
# Model shapes: GPT-3 (Brown et al. 2020, Table 2.1; NeMo's gpt3 configs: GeLU, 4h MLP, learned
# positions, tied embeddings, vocabulary 50257 padded to 50304), Llama 2 (Touvron et al. 2023 and the
# released config.json files), Llama 3 (Meta's released config.json: GQA 8 KV heads, vocabulary 128256).
import json, subprocess, sys, os, statistics, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
extra = sys.argv[1:]  # --set overrides, e.g. training.fp8_recipe=current
rows = {r['id']: r for r in json.load(open(os.path.join(HERE, 'data', 'nemo_fp8_h100.json')))['records']}
models = {  # published model configs (NeMo / Megatron GPT-3 configs, Llama config.json)
  'GPT3-5B':   dict(layers=24, hidden=4096, heads=32, ffn_hidden=16384, vocab=50304, activation='gelu', tied_embeddings=True),
  'GPT3-20B':  dict(layers=44, hidden=6144, heads=48, ffn_hidden=24576, vocab=50304, activation='gelu', tied_embeddings=True),
  'GPT3-175B': dict(layers=96, hidden=12288, heads=96, ffn_hidden=49152, vocab=50304, activation='gelu', tied_embeddings=True),
  'LLAMA2-7B': dict(layers=32, hidden=4096, heads=32, ffn_hidden=11008, vocab=32000, activation='swiglu', tied_embeddings=False),
  'LLAMA2-13B': dict(layers=40, hidden=5120, heads=40, ffn_hidden=13824, vocab=32000, activation='swiglu', tied_embeddings=False),
  'LLAMA2-70B': dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=32000, activation='swiglu', tied_embeddings=False),
  'LLAMA3-8B': dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=128256, activation='swiglu', tied_embeddings=False),
  'LLAMA3-70B': dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=128256, activation='swiglu', tied_embeddings=False),
}
ids = ['e2e-03%02d' % i for i in (37, 38, 39, 40, 41, 42, 43, 47, 48)]
errs = []
tmp = tempfile.mkdtemp()
for i in ids:
    r = rows[i]; m = dict(models[r['model']['name']]); m['seq_len'] = r['model']['seq_len']; m['type'] = 'transformer'
    p = r['parallelism']; tp = p['tp']
    w = {'name': i, 'model': m,
         'training': {'global_batch': r['global_batch_size'], 'micro_batch': r['micro_batch_size'], 'precision': 'fp8', 'recompute': 'none'},
         'parallelism': {'tp': tp, 'pp': p['pp'], 'cp': p['cp'], 'dp': p['dp'], 'sequence_parallel': tp > 1, 'tp_comm_overlap': tp > 1,
                         'zero_stage': 1, 'overlap_param_gather': True,
                         'pipeline_schedule': 'interleaved' if p['vp'] > 1 else '1f1b', 'virtual_stages': p['vp']}}
    f = os.path.join(tmp, '%s.json' % i); json.dump(w, open(f, 'w'))
    nodes = r['hardware']['num_gpus'] // 8
    cmd = [REPO + '/build/bin/clustersim', 'simulate', '--cluster', 'dgx-h100-superpod', '--set', 'nodes=%d' % nodes, '--workload', f, '--fidelity', 'analytical', '--json']
    for e in extra: cmd += ['--set', e]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode: print(i, 'ERR', out.stderr.strip()[:300]); continue
    rep = json.loads(out.stdout)
    meas = r['measured']['iteration_time_s_derived']; pred = rep['step_time_s']
    e = (pred - meas) / meas; errs.append(e)
    print('%s %-10s gpus %4d tp%d pp%d cp%d vp%d  measured %.3f s  predicted %.3f s  error %+.1f %%  fits %s' % (i, r['model']['name'], r['hardware']['num_gpus'], tp, p['pp'], p['cp'], p['vp'], meas, pred, 100 * e, rep['memory']['fits']))
a = [abs(x) for x in errs]
print('rows %d  MAPE %.1f %%  median |err| %.1f %%  max %.1f %%  bias %+.1f %%' % (len(a), 100 * sum(a) / len(a), 100 * statistics.median(a), 100 * max(a), 100 * sum(errs) / len(errs)))
