/* Random numbers for the differential runner: xoshiro256** seeded through
 * splitmix64, so a (seed, case index) pair draws the same case on every
 * platform and build. */
#include "diff.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void diff_rng_seed(diff_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t diff_rng_next(diff_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

int diff_rng_int(diff_rng_t *r, int lo, int hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo) + 1;
    return (int)((int64_t)lo + (int64_t)(diff_rng_next(r) % span));
}

double diff_rng_unit(diff_rng_t *r)
{
    return (double)(diff_rng_next(r) >> 11) * 0x1.0p-53;
}

bool diff_rng_chance(diff_rng_t *r, double p)
{
    return diff_rng_unit(r) < p;
}

uint64_t diff_case_seed(uint64_t seed, uint64_t index)
{
    uint64_t x = seed ^ (index * 0xd1342543de82ef95u);
    splitmix64(&x);
    return splitmix64(&x);
}
