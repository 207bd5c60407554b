gige-minimal-gain-8-to-16: not decided
ib-keeps-scaling: not reproduced
fca-gain-32-nodes: not reproduced
barrier-time-share-8-nodes: not reproduced
barrier-time-share-32-nodes: not reproduced
bcast-time-share-8-nodes: not reproduced
bcast-time-share-32-nodes: not reproduced
barrier-share-grows: not reproduced
mpi-share-grows: reproduced
irecv-call-share: not reproduced
isend-call-share: not reproduced
wait-call-share: not reproduced
waitall-call-share: not reproduced
small-messages: not reproduced
data-per-rank-falls: not reproduced
aggregated-transfer-grows: reproduced
more-writes-than-reads: reproduced
nfs-write-speed: not checkable
bytes-moved-4: reproduced
bytes-moved-8: reproduced
bytes-moved-16: reproduced
bytes-moved-32: reproduced
bytes-moved-64: reproduced
bytes-moved-128: reproduced
bytes-moved-256: reproduced
bytes-moved-512: reproduced
bytes-moved-1024: reproduced
bytes-moved-2048: reproduced
store-time-ratio-64: not reproduced
store-time-ratio-128: not reproduced
store-time-ratio-256: not reproduced
store-time-ratio-512: not reproduced
store-time-ratio-1024: not reproduced
store-time-ratio-2048: not reproduced
store-linear-to-128: reproduced
sync-slower-than-async: reproduced
nopack-much-slower: not measured
pet-xp-identical: not reproduced
large-grid-6-to-12-times: not measured
run-scales-linearly: not reproduced
cray-over-altix: not checkable
pop-ondemand-needed-past-256: not checkable
pop-scalability-541: reproduced
pop-scalability-2162: not reproduced
pop-scalability-2442: not reproduced
psp-queue-size-negligible: not checkable
homme-preconnected-best: not decided
homme-preconnect-fails-past-8000: not reproduced
homme-scalability-3456: reproduced
homme-scalability-13824: not reproduced
dual-rail-gain: reproduced
gige-stops-after-2-nodes: not decided
ib-over-10gige-504: not reproduced
ib-keeps-scaling: reproduced
knem-gain-504: not checkable
knem-gain-local: not decided
waitall-top-time: reproduced
allreduce-top-time: not reproduced
allreduce-share-grows: reproduced
libraries-comparable: reproduced
fca-gain-8-nodes: not reproduced
ib-over-gige-4-nodes: not decided
ib-over-10gige-4-nodes: not reproduced
gige-stops-after-2-nodes: not decided
10gige-stops-after-2-nodes: not reproduced
cpu-2200-over-1800: not reproduced
cpu-2200-over-1400: not reproduced
dual-rail-gain: not reproduced
knem-slight: not decided
compute-communication-crossover: not reproduced
mpi-share-grows: reproduced
start-call-share-8-nodes: not reproduced
allreduce-call-share-8-nodes: reproduced
allreduce-time-share-8-nodes: not reproduced
waitany-time-share-8-nodes: not reproduced
small-messages: not reproduced
data-per-rank-2-nodes: not reproduced
data-per-rank-4-nodes: not reproduced
data-per-rank-8-nodes: reproduced
aggregated-transfer-grows: reproduced
