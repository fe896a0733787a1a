import Foundation
import SwiftASN1
@_spi(CMS) import X509

/// A wallet pass's signature (`signature` in the archive): the detached PKCS #7 (CMS) signature of `manifest.json`
/// that Apple's `signpass` makes with the issuer's Pass Type ID certificate, which Apple's Worldwide Developer
/// Relations authority issues under the Apple Root CA. Checked with swift-certificates: the signature must be of this
/// manifest (else the pass was altered) and its certificate must lead to Apple's root (else anyone could have made
/// it; the pass is still read, as its barcode is what an airport scans).
public enum WalletPassSignature {
    public enum Verdict: Sendable, Hashable, CustomStringConvertible {
        /// The archive has no signature.
        case unsigned
        /// Signed by `signer` (its certificate's subject), whom Apple's root vouches for.
        case valid(signer: String)
        /// A signature of this manifest, by `signer`, whose certificate does not lead to Apple's root.
        case untrusted(signer: String, reason: String)
        /// Not a signature of this manifest.
        case invalid(String)

        public var description: String {
            switch self {
            case .unsigned: "unsigned"
            case .valid(let signer): "signed by \(signer) (Apple's root vouches for it)"
            case .untrusted(let signer, let reason):
                "signed by \(signer), whom Apple's root does not vouch for (\(reason))"
            case .invalid(let reason): "its signature is not of this pass: \(reason)"
            }
        }
    }

    /// Apple Root CA (Apple Inc., 2006–2035), as Apple publishes it at https://www.apple.com/certificateauthority/;
    /// SHA-256 fingerprint B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24.
    static let appleRootCA = """
        -----BEGIN CERTIFICATE-----
        MIIEuzCCA6OgAwIBAgIBAjANBgkqhkiG9w0BAQUFADBiMQswCQYDVQQGEwJVUzET
        MBEGA1UEChMKQXBwbGUgSW5jLjEmMCQGA1UECxMdQXBwbGUgQ2VydGlmaWNhdGlv
        biBBdXRob3JpdHkxFjAUBgNVBAMTDUFwcGxlIFJvb3QgQ0EwHhcNMDYwNDI1MjE0
        MDM2WhcNMzUwMjA5MjE0MDM2WjBiMQswCQYDVQQGEwJVUzETMBEGA1UEChMKQXBw
        bGUgSW5jLjEmMCQGA1UECxMdQXBwbGUgQ2VydGlmaWNhdGlvbiBBdXRob3JpdHkx
        FjAUBgNVBAMTDUFwcGxlIFJvb3QgQ0EwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAw
        ggEKAoIBAQDkkakJH5HbHkdQ6wXtXnmELes2oldMVeyLGYne+Uts9QerIjAC6Bg+
        +FAJ039BqJj50cpmnCRrEdCju+QbKsMflZ56DKRHi1vUFjczy8QPTc4UadHJGXL1
        XQ7Vf1+b8iUDulWPTV0N8WQ1IxVLFVkds5T39pyez1C6wVhQZ48ItCD3y6wsIG9w
        tj8BMIy3Q88PnT3zK0koGsj+zrW5DtleHNbLPbU6rfQPDgCSC7EhFi501TwN22IW
        q6NxkkdTVcGvL0Gz+PvjcM3mo0xFfh9Ma1CWQYnEdGILEINBhzOKgbEwWOxaBDKM
        aLOPHd5lc/9nXmW8Sdh2nzMUZaF3lMktAgMBAAGjggF6MIIBdjAOBgNVHQ8BAf8E
        BAMCAQYwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUK9BpR5R2Cf70a40uQKb3
        R01/CF4wHwYDVR0jBBgwFoAUK9BpR5R2Cf70a40uQKb3R01/CF4wggERBgNVHSAE
        ggEIMIIBBDCCAQAGCSqGSIb3Y2QFATCB8jAqBggrBgEFBQcCARYeaHR0cHM6Ly93
        d3cuYXBwbGUuY29tL2FwcGxlY2EvMIHDBggrBgEFBQcCAjCBthqBs1JlbGlhbmNl
        IG9uIHRoaXMgY2VydGlmaWNhdGUgYnkgYW55IHBhcnR5IGFzc3VtZXMgYWNjZXB0
        YW5jZSBvZiB0aGUgdGhlbiBhcHBsaWNhYmxlIHN0YW5kYXJkIHRlcm1zIGFuZCBj
        b25kaXRpb25zIG9mIHVzZSwgY2VydGlmaWNhdGUgcG9saWN5IGFuZCBjZXJ0aWZp
        Y2F0aW9uIHByYWN0aWNlIHN0YXRlbWVudHMuMA0GCSqGSIb3DQEBBQUAA4IBAQBc
        NplMLXi37Yyb3PN3m/J20ncwT8EfhYOFG5k9RzfyqZtAjizUsZAS2L70c5vu0mQP
        y3lPNNiiPvl4/2vIB+x9OYOLUyDTOMSxv5pPCmv/K/xZpwUJfBdAVhEedNO3iyM7
        R6PVbyTi69G3cN8PReEnyvFteO3ntRcXqNx+IjXKJdXZD9Zr1KIkIxH3oayPc4Fg
        xhtbCS+SsvhESPBgOJ4V9T0mZyCKM2r3DYLP3uujL/lTaltkwGMzd/c6ByxW69oP
        IQ7aunMZT7XZNn/Bh1XZp5m5MkL72NVxnn6hUrcbvZNCJBIqxw8dtk2cXmPIS4AX
        UKqK1drk/NAJBzewdXUh
        -----END CERTIFICATE-----
        """

    /// The verdict on `pass`'s signature. `roots` are PEM certificates trusted instead of Apple's (the tests' own
    /// authority).
    public static func check(_ pass: WalletPass, roots: [String]? = nil) async -> Verdict {
        guard let signature = pass.signature else { return .unsigned }
        let trusted: [Certificate]
        do {
            trusted = try (roots ?? [appleRootCA]).map { try Certificate(pemEncoded: $0) }
        } catch {
            return .invalid("the trusted certificates cannot be read: \(error)")
        }
        let result = await CMS.isValidSignature(
            dataBytes: pass.manifest, signatureBytes: naming(signature), trustRoots: CertificateStore(trusted)
        ) { RFC5280Policy() }
        switch result {
        case .success(let valid): return .valid(signer: signer(valid.signer))
        case .failure(.unableToValidateSigner(let failure)):
            let reason = failure.policyFailures.first.map { "\($0.policyFailureReason)" } ?? "no chain to the root"
            return .untrusted(signer: signer(failure.signer), reason: String(reason.prefix(200)))
        case .failure(.invalidCMSBlock(let block)):
            return .invalid(String(block.reason.prefix(200)))
        case .failure(let other):
            return .invalid(String("\(other)".prefix(200)))
        }
    }

    /// The signature with its algorithms named as swift-certificates reads them (RFC 5754). OpenSSL, and so
    /// `signpass` and most pass issuers, name the signer's algorithm `rsaEncryption` with the digest beside it, and
    /// give SHA-2 digests NULL parameters, as RFC 3370 allows: the signer's algorithm becomes
    /// `shaNWithRSAEncryption` as its digest says, and the digests lose the NULL. Only those nodes and the lengths
    /// around them change; the certificates and signed attributes are copied as they came.
    static func naming(_ signature: Data) -> [UInt8] {
        let bytes = [UInt8](signature)
        guard let root = try? BER.parse(bytes), let rootFields = Optional(children(root)), rootFields.count == 2,
            let wrapped = children(rootFields[1]).first
        else { return bytes }
        var signedData = children(wrapped).map { Array($0.encodedBytes) }
        let fields = children(wrapped)
        guard fields.count >= 4, let signerInfos = fields.last, let signer = children(signerInfos).first else {
            return bytes
        }
        // digestAlgorithms, the second field.
        signedData[1] = wrap(fields[1], children(fields[1]).flatMap(Self.withoutNull))
        var signerFields = children(signer).map { Array($0.encodedBytes) }
        let signerNodes = children(signer)
        guard signerNodes.count >= 5 else { return bytes }
        let digest = children(signerNodes[2]).first.map { Array($0.encodedBytes) } ?? []
        signerFields[2] = withoutNull(signerNodes[2])
        let algorithmIndex = signerNodes[3].identifier.tagClass == .contextSpecific ? 4 : 3
        if let oid = children(signerNodes[algorithmIndex]).first, oid.encodedBytes.elementsEqual(rsaEncryption),
            let last = digestSuffix[digest]
        {
            var algorithm = Array(signerNodes[algorithmIndex].encodedBytes)
            algorithm[oid.encodedBytes.endIndex - 1 - signerNodes[algorithmIndex].encodedBytes.startIndex] = last
            signerFields[algorithmIndex] = algorithm
        }
        let signers =
            [wrap(signer, signerFields.flatMap { $0 })]
            + children(signerInfos).dropFirst().map {
                Array($0.encodedBytes)
            }
        signedData[signedData.count - 1] = wrap(signerInfos, signers.flatMap { $0 })
        let inner = wrap(wrapped, signedData.flatMap { $0 })
        return wrap(root, Array(rootFields[0].encodedBytes) + wrap(rootFields[1], inner))
    }

    /// An AlgorithmIdentifier of a SHA-2 digest without its NULL parameters; any other as it came.
    private static func withoutNull(_ node: ASN1Node) -> [UInt8] {
        let parts = children(node)
        guard parts.count == 2, let oid = parts.first, digestSuffix[Array(oid.encodedBytes)] != nil,
            oid.encodedBytes.count == 11, parts[1].encodedBytes.elementsEqual([0x05, 0x00])
        else { return Array(node.encodedBytes) }
        return wrap(node, Array(oid.encodedBytes))
    }

    /// `content` under `node`'s identifier (one octet: every tag here is below 31), with a DER length.
    private static func wrap(_ node: ASN1Node, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var count = content.count
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [node.encodedBytes.first ?? 0x30] + length + content
    }

    /// `rsaEncryption` (1.2.840.113549.1.1.1), encoded.
    private static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// The last byte of `shaNWithRSAEncryption` (1.2.840.113549.1.1.5, .11, .12, .13) for each digest, encoded.
    private static let digestSuffix: [[UInt8]: UInt8] = [
        [0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A]: 0x05,
        [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]: 0x0B,
        [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02]: 0x0C,
        [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03]: 0x0D,
    ]

    private static func children(_ node: ASN1Node) -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { return [] }
        return Array(nodes)
    }

    /// A certificate's common name (`Pass Type ID: pass.com.example`), else its whole subject.
    private static func signer(_ certificate: Certificate) -> String {
        let subject = certificate.subject
        let name = subject.lazy.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }
        return String((name.map { "\($0.value)" } ?? "\(subject)").prefix(120))
    }
}
