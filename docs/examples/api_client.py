import sys

import httpx

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
scenario = {"name": "h100-rent", "accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
            "rent_usd_per_accelerator_hour": 2.5, "output_tokens_per_s_per_accelerator": 1000}
answer = httpx.post(url + "/v1/evaluate", json=[scenario], timeout=60)
if answer.status_code != 200:
    sys.exit(f"{answer.status_code}: {answer.json()['error']['message']}")
(row,) = answer.json()
print(f"{row['name']}: {row['cost_usd_per_m_tokens']:.4f} USD per M tokens, {row['cost_usd_per_hour']:.2f} USD/h")
