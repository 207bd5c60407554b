// Route store: who sends which elements to whom, as per-peer segments.
//   blocks/boxes on both sides: local overlap search, no communication;
//   an index list on either side: a distributed directory with sparse partner discovery.
#include <algorithm>
#include <map>

#include "internal.hpp"

using namespace esm;

// The ranks whose box meets [lo, hi) with the intersection, in rank order: f(rank, ilo, ihi).
// Blocks: per dimension a binary search of the cuts for the parts the box spans, then their
// product: O(ndims log P + k). Boxes: a scan of the allgathered boxes, O(P).
template <class F> void esm_distgrid::for_each_overlap(const int64_t lo[], const int64_t hi[], F &&f) const {
    for (int d = 0; d < ndims; d++)
        if (lo[d] >= hi[d]) return;
    int64_t ilo[max_dims], ihi[max_dims];
    if (kind == Kind::boxes) {
        for (int r = 0; r < nranks; r++) {
            const int64_t *b = &boxes[(size_t)r * 2 * ndims];
            bool meets = true;
            for (int d = 0; d < ndims && meets; d++) {
                ilo[d] = std::max(lo[d], b[d]);
                ihi[d] = std::min(hi[d], b[ndims + d]);
                meets = ilo[d] < ihi[d];
            }
            if (meets) f(r, ilo, ihi);
        }
        return;
    }
    int first[max_dims], last[max_dims], part[max_dims];  // parts [first, last) per dimension
    int64_t stride[max_dims];
    for (int d = 0; d < ndims; d++) {
        const std::vector<int64_t> &c = cuts[d];
        first[d] = (int)(std::upper_bound(c.begin(), c.end(), lo[d]) - c.begin()) - 1;
        last[d] = (int)(std::lower_bound(c.begin(), c.end(), hi[d]) - c.begin());
        part[d] = first[d];
        stride[d] = d == 0 ? 1 : stride[d - 1] * parts[d - 1];
    }
    for (;;) {
        bool meets = true;
        int64_t r = 0;
        for (int d = 0; d < ndims; d++) {
            ilo[d] = std::max(lo[d], cuts[d][part[d]]);
            ihi[d] = std::min(hi[d], cuts[d][part[d] + 1]);
            meets = meets && ilo[d] < ihi[d];  // empty parts (equal cuts) hold nothing
            r += part[d] * stride[d];
        }
        if (meets) f((int)r, ilo, ihi);
        int d = 0;
        while (d < ndims && ++part[d] == last[d]) part[d] = first[d], d++;
        if (d == ndims) return;
    }
}

namespace esm {

void box_segments(int ndims, const int64_t blo[], const int64_t bhi[], const int64_t lo[], const int64_t hi[],
                  std::vector<Segment> &out) {
    int64_t stride[max_dims] = {}, ext[max_dims] = {}, offset = 0;
    for (int d = 0; d < ndims; d++) {
        stride[d] = d == 0 ? 1 : stride[d - 1] * (bhi[d - 1] - blo[d - 1]);
        ext[d] = hi[d] - lo[d];
        if (ext[d] <= 0) return;
        offset += (lo[d] - blo[d]) * stride[d];
    }
    Segment s;
    s.len = ext[0];
    for (int j = 0; j < 3 && j + 1 < ndims; j++) s.count[j] = ext[j + 1], s.stride[j] = stride[j + 1];
    // dimensions beyond the fourth: one segment per combination of their indices
    int64_t idx[max_dims] = {};
    for (;;) {
        s.offset = offset;
        for (int d = 4; d < ndims; d++) s.offset += idx[d] * stride[d];
        out.push_back(s);
        int d = 4;
        while (d < ndims && ++idx[d] == ext[d]) idx[d++] = 0;
        if (d >= ndims) return;
    }
}

static int64_t elements_of(const std::vector<Segment> &segs) {
    int64_t n = 0;
    for (const Segment &s : segs) n += s.elements();
    return n;
}

Plan plan_box_route(const esm_distgrid &src, const esm_distgrid &dst, int rank,
                    const std::function<bool(int)> &wants_remote) {
    Plan plan;
    int n = src.ndims;
    int64_t slo[max_dims], shi[max_dims], dlo[max_dims], dhi[max_dims];
    src.box_of(rank, slo, shi);
    dst.box_of(rank, dlo, dhi);
    dst.for_each_overlap(slo, shi, [&](int q, const int64_t ilo[], const int64_t ihi[]) {
        if (q == rank) {
            box_segments(n, slo, shi, ilo, ihi, plan.self_src);
            box_segments(n, dlo, dhi, ilo, ihi, plan.self_dst);
            return;
        }
        Peer &p = plan.sends.emplace_back();
        p.rank = q;
        box_segments(n, slo, shi, ilo, ihi, p.segs);
        p.elements = elements_of(p.segs);
    });
    src.for_each_overlap(dlo, dhi, [&](int q, const int64_t ilo[], const int64_t ihi[]) {
        if (q == rank) return;
        Peer &p = plan.recvs.emplace_back();
        p.rank = q;
        box_segments(n, dlo, dhi, ilo, ihi, p.segs);
        p.elements = elements_of(p.segs);
        if (wants_remote(q)) {
            int64_t qlo[max_dims], qhi[max_dims];
            src.box_of(q, qlo, qhi);
            box_segments(n, qlo, qhi, ilo, ihi, p.remote);
        }
    });
    return plan;
}

namespace {

// A run handed to the directory: [global, global + len) stored from `local` on by `owner`.
struct Entry {
    int64_t global, len, local;
    int owner;
};

// A piece matched by the directory, as its owners receive it.
struct Piece {
    int64_t global, len, src_local, dst_local;
};

enum : int64_t { to_sender = 0, to_receiver = 1, to_self = 2 };

// Checks that the entries (sorted) cover [lo, hi) exactly once.
void check_cover(const std::vector<Entry> &entries, int64_t lo, int64_t hi, const char *side) {
    int64_t expect = lo;
    int previous = -1;
    for (const Entry &e : entries) {
        if (e.global > expect)
            fail(ESM_ERR_TILING, "esm_route_store: the %s decomposition does not tile the index space: global index %lld is held by no rank",
                 side, (long long)expect);
        if (e.global < expect)
            fail(ESM_ERR_TILING, "esm_route_store: the %s decomposition does not tile the index space: global index %lld is held by ranks %d and %d",
                 side, (long long)e.global, previous, e.owner);
        expect = e.global + e.len;
        previous = e.owner;
    }
    if (expect < hi)
        fail(ESM_ERR_TILING, "esm_route_store: the %s decomposition does not tile the index space: global index %lld is held by no rank",
             side, (long long)expect);
}

// Appends a piece to segment lists of both sides, merging runs contiguous on both sides and
// folding equal runs at constant strides into one strided segment. Deterministic, so both
// owners of a pair (who see the same pieces) build the same shapes.
void append_piece(std::vector<Segment> &src, std::vector<Segment> &dst, const Piece &p) {
    if (!src.empty()) {
        Segment &s = src.back(), &d = dst.back();
        if (s.rows() == 1 && s.offset + s.len == p.src_local && d.offset + d.len == p.dst_local) {
            s.len += p.len, d.len += p.len;
            return;
        }
        if (s.count[1] == 1 && s.len == p.len) {
            int64_t n = s.count[0];
            if (n == 1 && p.src_local > s.offset && p.dst_local > d.offset) {
                s.stride[0] = p.src_local - s.offset, d.stride[0] = p.dst_local - d.offset;
                s.count[0] = d.count[0] = 2;
                return;
            }
            if (n > 1 && p.src_local == s.offset + n * s.stride[0] && p.dst_local == d.offset + n * d.stride[0]) {
                s.count[0] = d.count[0] = n + 1;
                return;
            }
        }
    }
    Segment s, d;
    s.offset = p.src_local, d.offset = p.dst_local;
    s.len = d.len = p.len;
    src.push_back(s);
    dst.push_back(d);
}

}  // namespace

Plan plan_directory_route(const esm_distgrid &src, const esm_distgrid &dst, MPI_Comm comm, int tag,
                          const std::function<bool(int)> &wants_remote) {
    int rank = 0, nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    const int64_t total = src.total;
    const int64_t slice = std::max<int64_t>(1, (total + nranks - 1) / nranks);
    // phase 1: every run to the directory rank of its slice of the global index space
    std::map<int, Records> out;
    for (int side = 0; side < 2; side++)
        for (const IndexRun &r : (side == 0 ? src : dst).global_runs()) {
            int64_t g = r.global, local = r.local, left = r.len;
            while (left > 0) {
                int owner = (int)(g / slice);
                int64_t n = std::min(left, (owner + 1) * slice - g);
                Records &rec = out[owner];
                rec.insert(rec.end(), {side, g, n, local});
                g += n, local += n, left -= n;
            }
        }
    std::vector<std::pair<int, Records>> sends(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
    out.clear();
    auto received = sparse_exchange(comm, tag, std::move(sends));
    // directory work: check the cover of my slice, match source and destination runs
    std::vector<Entry> entries[2];
    for (auto &[owner, rec] : received)
        for (size_t i = 0; i + 4 <= rec.size(); i += 4) entries[rec[i]].push_back({rec[i + 1], rec[i + 2], rec[i + 3], owner});
    received.clear();
    const int64_t lo = std::min(total, rank * slice), hi = std::min(total, (rank + 1) * slice);
    Outcome outcome;
    try {
        for (int side = 0; side < 2; side++) {
            std::sort(entries[side].begin(), entries[side].end(),
                      [](const Entry &a, const Entry &b) { return a.global < b.global; });
            check_cover(entries[side], lo, hi, side == 0 ? "source" : "destination");
        }
    } catch (const Error &e) {
        outcome.set(e);
    }
    agree(comm, outcome, 0, "");
    // phase 2: the matched pieces to their owners
    for (size_t i = 0, j = 0; i < entries[0].size() && j < entries[1].size();) {
        const Entry &s = entries[0][i], &d = entries[1][j];
        int64_t begin = std::max(s.global, d.global);
        int64_t end = std::min(s.global + s.len, d.global + d.len);
        if (begin < end) {
            int64_t slocal = s.local + (begin - s.global), dlocal = d.local + (begin - d.global);
            if (s.owner == d.owner) {
                Records &rec = out[s.owner];
                rec.insert(rec.end(), {to_self, s.owner, begin, end - begin, slocal, dlocal});
            } else {
                Records &a = out[s.owner];
                a.insert(a.end(), {to_sender, d.owner, begin, end - begin, slocal, dlocal});
                Records &b = out[d.owner];
                b.insert(b.end(), {to_receiver, s.owner, begin, end - begin, slocal, dlocal});
            }
        }
        if (s.global + s.len <= d.global + d.len) i++;
        else j++;
    }
    sends.assign(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
    out.clear();
    received = sparse_exchange(comm, tag + 1, std::move(sends));
    // assemble: per (direction, peer) the pieces in global order
    std::map<std::pair<int64_t, int64_t>, std::vector<Piece>> groups;
    for (auto &[from, rec] : received)
        for (size_t i = 0; i + 6 <= rec.size(); i += 6)
            groups[{rec[i], rec[i + 1]}].push_back({rec[i + 2], rec[i + 3], rec[i + 4], rec[i + 5]});
    received.clear();
    Plan plan;
    for (auto &[key, pieces] : groups) {
        std::sort(pieces.begin(), pieces.end(), [](const Piece &a, const Piece &b) { return a.global < b.global; });
        std::vector<Segment> ssegs, dsegs;
        for (const Piece &p : pieces) append_piece(ssegs, dsegs, p);
        int peer = (int)key.second;
        if (key.first == to_self) {
            plan.self_src = std::move(ssegs);
            plan.self_dst = std::move(dsegs);
        } else if (key.first == to_sender) {
            Peer &p = plan.sends.emplace_back();
            p.rank = peer;
            p.segs = std::move(ssegs);
            p.elements = elements_of(p.segs);
        } else {
            Peer &p = plan.recvs.emplace_back();
            p.rank = peer;
            p.segs = std::move(dsegs);
            p.elements = elements_of(p.segs);
            if (wants_remote(peer)) p.remote = std::move(ssegs);
        }
    }
    return plan;
}

}  // namespace esm
