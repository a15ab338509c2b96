// A Sigstore bundle (dsseEnvelope, public-key verification material, no
// Rekor or TSA witness) made by @sigstore/sign, the Sigstore project's
// own JS signer, with a local key:
//   node mk-bundle.js PAYLOAD PRIVATE-KEY.pem PAYLOAD-TYPE OUT.json
const { DSSEBundleBuilder } = require('@sigstore/sign');
const { bundleToJSON } = require('@sigstore/bundle');
const crypto = require('crypto');
const fs = require('fs');

const [payloadFile, keyFile, type, out] = process.argv.slice(2);
const key = crypto.createPrivateKey(fs.readFileSync(keyFile));
const pub = crypto.createPublicKey(key).export({ type: 'spki', format: 'pem' });
const signer = {
  sign: async (data) => ({
    // Ed25519 signs the PAE bytes as they are; P-256 over their SHA-256
    signature: crypto.sign(key.asymmetricKeyType === 'ed25519' ? null : 'sha256', data, key),
    key: { $case: 'publicKey', publicKey: pub, hint: 'ingot-test' },
  }),
};
new DSSEBundleBuilder({ signer, witnesses: [] })
  .create({ data: fs.readFileSync(payloadFile), type })
  .then((b) => fs.writeFileSync(out, JSON.stringify(bundleToJSON(b))))
  .catch((e) => { console.error(e); process.exit(1); });
