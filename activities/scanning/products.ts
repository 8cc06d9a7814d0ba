/** The shapes of a scan's answer shared by its steps and its events: its status and each product found on the receipt. */
export type ScanStatus = 'processing' | 'pending_validation' | 'completed' | 'rejected' | 'failed';
type ProductValidation = 'auto_approved' | 'pending' | 'approved' | 'rejected';

export interface ScanProduct {
  id: string;
  name: string;
  brand_id: number;
  confidence: number;
  points: number;
  quantity: number;
  unit_price: number;
  line_price: number;
  expected_price: number | null;
  lines: string[];
  needs_validation: boolean;
  validation_status: ProductValidation;
  validated_by: string | null;
  validated_at: string | null;
  notes: string | null;
}
