# typedtime.py [PROFILE...]: construction time of each typed model list (experiments/models/half/)
# against its f32 twin: gensor suite --threads 1, min of GS_TT_REPS (3) runs per operator; prints the ratio of
# the sums of construct_ms (typed/f32) and the median per-operator ratio (issue 18: <= 1.1).
import json, subprocess, statistics, sys
pairs=[('bert_small_s128_b16','f16'),('gpt2_small_s128_b1','bf16'),('resnet50_b1','f16'),('bert_small_s128_b16','bf16'),('gpt2_small_s1024_b1','f16')]
def run(path,hw):
    out=subprocess.run(['./build/gensor','suite',path,'--hw',hw,'--format','json','--threads','1'],capture_output=True,text=True).stdout
    j=json.loads(out)
    ops=j['ops'] if 'ops' in j else j['results']
    return [o['construct_ms'] for o in ops]
for hw in (sys.argv[1:] or ['h100','rtx3090']):
    for m,t in pairs:
        f=f'experiments/models/{m}.json'; h=f'experiments/models/half/{m}_{t}.json'
        A=[];B=[]
        for r in range(int(__import__('os').environ.get('GS_TT_REPS', '3'))):
            A.append(run(f,hw)); B.append(run(h,hw))
        a=[min(x) for x in zip(*A)]; b=[min(x) for x in zip(*B)]
        print(hw,m,t,'sum typed/f32 %.3f'%(sum(b)/sum(a)),'median ratio %.3f'%statistics.median([y/x for x,y in zip(a,b)]), 'f32 sum %.1f ms'%sum(a))
